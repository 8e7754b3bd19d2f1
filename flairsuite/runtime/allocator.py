"""Memory settings for long-running processes: glibc keeps freed memory (LM training, `flairsuite serve`); oneDNN's cache of
primitives is bounded (LMs and taggers).

Every training step allocates and frees the same large activation buffers; glibc's defaults
serve them with fresh mmap()s and trim the heap, so the process spends much of its time in page
faults (about 17 % of Flair's LM trainer's CPU time here). The server's batches do the same with the
character LMs' state buffers: kept, a batch of 12 documents took 5 k page faults instead of 123 k and 8 %
less CPU time. These are the settings of the
environment variables MALLOC_MMAP_MAX_=0, MALLOC_TRIM_THRESHOLD_ and MALLOC_TOP_PAD_, applied
at run time with mallopt(3).

oneDNN (torch's CPU kernels, the bfloat16 LSTM among them) caches a primitive, with its reordered
weights and workspace, per input shape, up to 1,024 of them. The window ramp feeds 226 window lengths:
a hidden-1024 LM in bfloat16 grew to 8.6 GB RSS (and was killed for memory beside a second one); with
8 cached primitives it stays flat, and the ramp loses nothing (each length is used for a few steps only).
A BiLSTM tagger in bfloat16 meets the same: each batch's longest sentence is a new shape (LER's train
sentences run to 644 tokens); the recipe's BiLSTM fed 100 lengths between 20 and 416 grew RssAnon by
669 MB with the default cache and by 368 MB with 8, in the same time (benchmarks/tagging_memory.py).
"""

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_MAX = -4
SETTINGS = {M_MMAP_MAX: 0, M_TRIM_THRESHOLD: 2**31 - 1, M_TOP_PAD: 1 << 30}
ONEDNN_CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"  # read by oneDNN when it makes its first primitive
PRIMITIVE_CACHE = 8


def bound_primitive_cache() -> None:
    """oneDNN keeps at most PRIMITIVE_CACHE primitives, unless the environment sets it; call before the first forward pass."""
    os.environ.setdefault(ONEDNN_CACHE, str(PRIMITIVE_CACHE))


def keep_freed_memory() -> bool:
    """Apply the settings; False where the C library is not glibc (nothing changes then)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return all(mallopt(option, value) == 1 for option, value in SETTINGS.items())
