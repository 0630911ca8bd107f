"""The catalog service: the Metadata Catalog Service REST interface (see ``app.create_app``)."""
