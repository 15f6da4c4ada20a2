// Package app is the bridge's composition root: the one place that builds
// a running bridge from a loaded config and runs it (Run). It opens the
// bots' platform adapters, the store and the replicas, builds the agents'
// containment (sandboxes, networks, the egress proxy) and resource limits,
// assembles the core with its features (schedule, spend, worktrees, agent
// tools, the terminal hand-off, the web console), and owns what runs
// beside the core: the config reloader, /healthz and /metrics, the
// retention pruner and the replicas' config records.
//
// It is named app, not bridge or core, because it is neither the contract
// (package bridges) nor the worker (bridges/core): it is the application
// those make once wired together, and nothing but a program's main (and
// the commands that share its config loader and store) imports it.
// Process concerns stay with the caller: flags, signals, the data_dir
// lock, a demo model, a CPU profile, exit codes.
package app
