"""`tb-advisor mcp`: the Advisor's answers for coding agents, over the Model Context Protocol (stdio)."""
