"""bench_side_by_side_hta.py DIR: what a user of Holistic Trace Analysis runs
to learn what `gtrace report` prints first: load the Chrome traces in DIR
(one file per rank, as `gtrace export --format chrome -o DIR/` writes them),
then the temporal breakdown (idle, compute, communication per rank) and the
kernel breakdown (time per kernel name). Prints one line with the rows it
got, so a run that read nothing cannot pass for a fast one."""
import logging
import sys
import warnings

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402

ana = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
temporal = ana.get_temporal_breakdown(visualize=False)
kernels, _ = ana.get_gpu_kernel_breakdown(visualize=False)
print(f"hta: {len(temporal)} ranks in the temporal breakdown, {len(kernels)} kernel rows")
