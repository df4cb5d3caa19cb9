// Package e2e runs the scheduler as it runs in production — app.Run with its manager,
// informers, leader-election-free here — against a real kube-apiserver and etcd, with a
// small test kubelet playing the nodes. Scenarios are checked through the API objects a user
// would look at: pod bindings, deletions, PodGroup annotations.
package e2e
