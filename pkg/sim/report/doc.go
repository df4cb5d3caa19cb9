// Package report is what a simulation tells: its Result (the events, every job's and queue's
// and node pool's figures, the problems and warnings), the public JSON contract of kai-sim's
// --output json (WriteJSON), the readable timeline and tables (WriteText, and WriteComparison
// for runs side by side) and the plot of GPUs per queue over time (WritePlot). It renders
// results and never runs anything: the engine in package sim fills a Result.
package report
