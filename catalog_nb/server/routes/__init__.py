"""One APIRouter per resource family; routes parse, authorize, call the store and shape."""
