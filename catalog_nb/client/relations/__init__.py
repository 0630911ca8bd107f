"""How resources relate: lineage and impact (:mod:`.lineage`, networkx graphs in :mod:`.graphs`),
join conditions and join paths (:mod:`.joins`), table overlap (:mod:`.overlap`), and the frames
and scopes they share (:mod:`.frames`).
"""
