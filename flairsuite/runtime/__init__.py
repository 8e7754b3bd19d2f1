"""Runtime helpers: numeric precision, distributed process groups, memory, the allocator."""
