// Package apis checks the CRDs as users meet them: against a real kube-apiserver, valid
// KAI-style manifests (including docs/examples) are stored unchanged and readable through the
// typed API, and invalid ones are refused with a message that says what is wrong.
package apis
