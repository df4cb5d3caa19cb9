// Package dispatch measures, against a real kube-apiserver, how long the API calls of a
// scheduling cycle take to land: binds sent one at a time within the cycle, or by the
// dispatcher's bounded parallel workers off it (apiwriter.Dispatcher). It holds a benchmark only;
// docs/performance.md records its figures.
package dispatch
