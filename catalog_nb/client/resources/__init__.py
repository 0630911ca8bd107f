"""Data sources and what profiling finds in them: data sources (:mod:`.sources`), data resources
and their fields (:mod:`.resources`, frames in :mod:`.frames`, keyword filters in :mod:`.query`,
one resource in :mod:`.view`), the metadata pages read into frames (:mod:`.paged_frame`,
:mod:`.arrow_frame`), custom property definitions (:mod:`.properties`) and virtual folders and
data sets (:mod:`.folders`).
"""
