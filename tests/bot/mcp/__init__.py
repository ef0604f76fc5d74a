"""The MCP server and its tools."""
