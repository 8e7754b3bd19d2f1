"""Runtime helpers: threads (the default count beside other work), numeric precision, distributed process groups, memory, the allocator."""
