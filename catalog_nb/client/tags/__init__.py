"""Everything tags: tag domains and tags (:mod:`.tags`), their frames (:mod:`.frames`), naming a
tag by name, key or record (:mod:`.refs`), tag associations (:mod:`.associations`), bulk tagging
from DataFrames (:mod:`.bulk`, planned by :mod:`.bulk_plan`, applied by :mod:`.bulk_apply`) and
tag coverage with the tag graph (:mod:`.coverage`).
"""
