"""Qt item models (QAbstractItemModel adapters) over the Document and the schema registry,
shared by the docks and tools that show them."""
