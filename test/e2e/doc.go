// Package e2e runs the scheduler as it runs in production — app.Run with its manager,
// informers, leader-election-free here — against a real kube-apiserver and etcd, with KWOK
// playing the nodes: Ready, running the pods bound to them, removing the pods deleted.
// Scenarios are checked through the API objects a user would look at: pod bindings,
// deletions, PodGroup annotations.
package e2e
