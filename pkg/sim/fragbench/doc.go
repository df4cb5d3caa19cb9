// Package fragbench measures how well a GPU placement strategy packs GPU-sharing workloads:
// the benchmark of issue 42, modelled on the ATC'23 paper "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent" (Weng et al.), whose
// production result — the share of a cluster's GPUs allocated while pods arrive, none
// leaving, until they ask for 130% of its GPUs — is the figure a placement is judged by.
//
// Generate makes the mix: a heterogeneous cluster (8-GPU nodes of 80 and 40 GiB devices,
// 4-GPU nodes of 24 GiB, 2-GPU nodes of 16 GiB, CPU-only nodes) and pods that arrive one a
// second and never finish — shares of one GPU, whole GPUs, 2 to 8 GPUs, CPU only — until
// their GPU requests reach 130% of the cluster's GPUs. It is deterministic from its seed, so
// a figure recorded in docs/performance.md can be measured again, and written as an ordinary
// kai-sim scenario (Mix.Scenario), so any run of it can be looked at with kai-sim's own
// output and plot.
//
// Run plays a mix in kai-sim (package sim: the real scheduler, its nodeplacement plugin
// given the strategy) and reads, from the run's samples, the share of GPUs allocated and
// stranded at the moments the arrivals reach 100%, 110% and 130% of capacity. kai-sim's
// device plugin checks every bind, so a run is also a check of device safety: a share the
// scheduler put where no device has room fails the run. hack/fragbench prints the table for
// the full-size cluster; a small one runs in pkg/sim's tests.
package fragbench
