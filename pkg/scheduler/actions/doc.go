// Package actions holds the steps of a scheduling cycle, one subpackage per action, and the
// placement helpers they share.
package actions
