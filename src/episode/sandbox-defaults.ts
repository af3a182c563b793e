// The sandbox's default limits, apart from the watchdog's code: `mass episode --help` shows them without loading it.

/**
 * Agents install packages, train models on several cores and run data loaders with worker pools: a few hundred
 * processes at a time is real work. A thousand is not, and stops a fork bomb long before the host's pid table fills.
 */
export const DEFAULT_PROCESS_LIMIT = 1024;
/**
 * Room for datasets, model checkpoints and installed packages (a PyTorch wheel with its CUDA libraries is several
 * GiB), far below what would fill a host's disk when a few episodes run at once.
 */
export const DEFAULT_DISK_BYTES = 32 * 1024 ** 3;
/**
 * The kernel counts threads against RLIMIT_NPROC, and numeric libraries (OpenBLAS, PyTorch) start one per core in
 * every process; so the kernel's backstop allows this many threads per allowed process.
 */
export const THREADS_PER_PROCESS = 8;
