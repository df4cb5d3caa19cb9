package actions

// UseDomainOrder makes Candidates try domains in order until the returned function restores
// the scheduler's.
func UseDomainOrder(order DomainOrder) (restore func()) {
	domainOrder = order
	return func() { domainOrder = FullestFirst }
}
