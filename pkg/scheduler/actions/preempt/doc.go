// Package preempt lets a pending job take resources from strictly lower-priority jobs of its
// own leaf queue. Jobs of equal priority never preempt each other, so two jobs cannot take
// turns evicting one another.
package preempt
