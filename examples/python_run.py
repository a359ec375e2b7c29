#!/usr/bin/python3
"""python_run.py - railsim from Python, notebook style (docs/python.md).

A training iteration run through librailsim: its summary, its op timeline
as a pandas DataFrame and where the time went, per op kind and per
parallelism dimension; then the same all-to-all on both topologies. Each
"# %%" starts a cell (Jupyter's percent format: VS Code, Spyder and
jupytext open it as a notebook); as a script it runs top to bottom in a
few seconds.

    cmake --install build --prefix P
    PYTHONPATH=P/lib/python3/dist-packages /usr/bin/python3 examples/python_run.py [PLOT.png]

With PLOT.png (and python3-matplotlib) it also draws each rank's compute
and communication op time.
"""
# %% A training iteration: demo-dense (TP inside the HB domain, DP
# across) on 16 GPUs. Dotted keys are the scenario's (docs/scenario-format.md).
import sys

import railsim

r = railsim.run({"workload.plan": "demo-dense", "topology.gpus": 16, "topology.radix": 8})
it = r.summary["iteration"]
print("%s, %s: iteration %.3f ms, exposed communication %.3f ms (mean over ranks), MFU %.1f%%"
      % (r.status, r.summary["topology"]["kind"], it["time_ps"] / 1e9,
         it["exposed_comm_ps"]["mean"] / 1e9, 100 * it["mfu"]))

# %% The op records, one row per op a rank ran (docs/timeline-format.md).
ops = r.timeline["op"]
print(ops.head())

# %% Where the time went: op time by kind, and communication by dimension
# (the communicator's name up to its index: "dp[1]" -> "dp"), as
# `railsim report` groups it.
names = r.timeline["name"]
comms = names[names.space == 2].set_index("id")["name"]
ops = ops.assign(dur_us=(ops.end_ps - ops.start_ps) / 1e6,
                 dim=ops.comm.map(comms).map(railsim.dimension, na_action="ignore").fillna("-"))
print(ops.groupby("op").dur_us.agg(["count", "sum", "mean"]).round(1))
print(ops[ops.op != "compute"].groupby(["dim", "op"]).agg(ops=("dur_us", "size"), us=("dur_us", "sum"),
                                                           bytes=("bytes", "sum")).round(1))

# %% Both topologies: an all-to-all across 64 GPUs, whose traffic crosses
# rails (rail-only relays it through the HB domain, PXN).
c = railsim.compare({"topology.gpus": 64, "topology.radix": 8, "traffic.kind": "all-to-all",
                     "traffic.bytes": 65536})
for kind in ("rail-only", "fat-tree"):
    s = c[kind]
    print("%-9s %s %.3f us, %d switches, bytes through HB domains %d"
          % (kind, s.time_of, s.time_ps / 1e6, s.summary["topology"]["switches"],
             s.summary["payload_bytes"]["hb"]))
print("rail-only vs fat tree: %+.1f%%" % c.time_pct)

# %% Per rank: compute and communication op time, drawn (summed over ops,
# so communication hidden behind compute counts too).
if len(sys.argv) > 1:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per = ops.groupby(["rank", ops.op == "compute"]).dur_us.sum().unstack(fill_value=0)
    ax = per.rename(columns={True: "compute", False: "communication"}).plot.bar(stacked=True, figsize=(8, 3))
    ax.set_ylabel("op time, us")
    ax.legend(title=None)
    ax.set_title("demo-dense on 16 GPUs, one iteration")
    plt.tight_layout()
    plt.savefig(sys.argv[1])
    print("wrote", sys.argv[1])
