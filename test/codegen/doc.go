// Package codegen guards the generated files: its test regenerates deepcopy functions and
// CRD manifests on a copy of the tree and fails if the committed ones differ.
package codegen
