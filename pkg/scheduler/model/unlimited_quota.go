package model

import (
	"fmt"
	"strings"
)

// UnlimitedQuota is a queue whose quota of a resource is -1 beside sibling queues whose
// quotas of it are above zero. It is owed all its jobs ask, up to all its parent has, so
// their quotas together are more than there is (over-subscribed): while it holds what it
// asks, what it holds is not reclaimed for their quotas, and they may not get them. Beside
// queues of quota 0, which are owed nothing, -1 only says it goes first, and is not told.
type UnlimitedQuota struct {
	Queue    string
	Resource ResourceName
	// Beside are the siblings with a quota above zero, in name order, with their quotas in
	// the scheduler's units.
	Beside []string
	Quotas []float64
}

// Message says what the quota does to the queues beside it, and how to mend it.
func (u UnlimitedQuota) Message() string {
	beside := make([]string, len(u.Beside))
	for i, name := range u.Beside {
		beside[i] = name + " " + FormatQueueAmount(u.Resource, u.Quotas[i])
	}
	return fmt.Sprintf("%s quota -1: this queue is owed all its jobs ask for, up to all its parent has, as the queues beside it are owed their quotas (%s): "+
		"their quotas are over-subscribed, and what it holds within what it asks for is never reclaimed for theirs. "+
		"Give it a finite quota (0 for work that should get only what no queue is owed) unless that is meant",
		QueueSpecKey(u.Resource), strings.Join(beside, ", "))
}

// UnlimitedQuotas lists the queues whose quota of some resource is -1 beside siblings with
// quotas above zero, by queue name and resource. Only valid queues count, on either side.
func (t *QueueTree) UnlimitedQuotas() []UnlimitedQuota { return t.unlimited }

// findUnlimitedQuotas fills UnlimitedQuotas, once the tree is validated. The usual tree has
// none — quotas of -1 beside quotas of 0 or -1, such as CPU and memory left unlimited
// everywhere, warn of nothing — and costs a pass over the queues that allocates nothing.
func (t *QueueTree) findUnlimitedQuotas() {
	var topPositive [NumQuotaResources]bool
	positive := func(q *QueueInfo) *[NumQuotaResources]bool {
		if q.Parent == "" {
			return &topPositive
		}
		return &t.byName[q.Parent].childPositive
	}
	for _, name := range t.names {
		if q := t.byName[name]; q.IsValid() {
			for _, r := range QuotaResources {
				if q.Resources[r].Quota > 0 {
					positive(q)[r] = true
				}
			}
		}
	}
	for _, name := range t.names {
		q := t.byName[name]
		if !q.IsValid() {
			continue
		}
		for _, r := range QuotaResources {
			if q.Resources[r].Quota < 0 && positive(q)[r] {
				t.unlimited = append(t.unlimited, t.unlimitedBeside(q, r))
			}
		}
	}
}

// unlimitedBeside is q's UnlimitedQuota of r: its siblings with quotas above zero.
func (t *QueueTree) unlimitedBeside(q *QueueInfo, r ResourceName) UnlimitedQuota {
	u := UnlimitedQuota{Queue: q.Name, Resource: r}
	for _, name := range t.names {
		if other := t.byName[name]; other != q && other.Parent == q.Parent && other.IsValid() && other.Resources[r].Quota > 0 {
			u.Beside, u.Quotas = append(u.Beside, name), append(u.Quotas, other.Resources[r].Quota)
		}
	}
	return u
}
