"""Pydantic request and response models, one module per resource family."""
