// Package priority orders jobs by priority: higher-priority jobs are scheduled first.
package priority
