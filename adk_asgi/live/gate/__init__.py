"""What a live run waits for inside its tools: approvals, browser tools, input and
credentials (``gate``), routed there by an ADK plugin (``plugin``), with the questions it
asks (``asks``). Internal."""
