"""Who is calling and what they may do: agents, grants and the server's tool selection."""
