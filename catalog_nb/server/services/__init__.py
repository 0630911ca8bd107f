"""Use cases that span several store modules, between the routes and the store.

A route parses its request, calls one function here (or one store function when the use case
is one store family's), and shapes the answer. Services take a ``Store`` or a connection and the
``Caller``, raise the domain errors of ``server.errors`` (never HTTP exceptions), and leave the
SQL to the store. One module per use case family:

* ``resource_views``: the read model of data resources (one resource, a page, its extras);
* ``resource_updates``: writing what people add to a resource;
* ``searching``: running a search, storing its result, paging through it;
* ``associations``: the state a new tag association starts in;
* ``sources``: what an update of a data source may change;
* ``tag_views``: tags with their direct children and association counts;
* ``tag_writes``: writing tag domains and tags, one at a time or as a list;
* ``users``: writing user profiles and their roles;
* ``permits``: which users may see a data source or resource;
* ``folders``: virtual folders and data sets, read and written as the caller sees them.
"""
