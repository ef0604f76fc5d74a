"""The database: schema, bulk I/O, the fact codec."""
