"""What the tools do: the gate's writes and reads, batches, typed tools and the memory profile."""
