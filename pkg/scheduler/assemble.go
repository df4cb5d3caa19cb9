package scheduler

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/apiwriter"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// Options are everything one scheduler is assembled from. The binary, kai-sim (one per node
// pool) and their tests fill the same fields: only the cluster side (Client, and what feeds
// the Store: informers of a real API server, or kai-sim's in-memory cluster) and the Clock
// differ, so that what kai-sim shows is what the binary would do.
type Options struct {
	// Name selects the pods to schedule (spec.schedulerName).
	Name string
	// Pool is the node pool served; the zero value serves the objects without a pool label.
	Pool scheduling.NodePool
	// Policy is the actions and plugins every cycle runs (LoadPolicy). Required.
	Policy *Policy
	// Clock is the scheduler's time, virtual in kai-sim. Required: a scheduler that fell
	// back to the wall clock in a simulation would decide at the wrong time, silently.
	Clock clock.WithTicker
	// Period is the time between cycles. Required.
	Period time.Duration
	// Client is where binds, evictions, nominations and statuses are written. Required.
	Client client.Client
	// StatusClient, when set, receives the status updater's writes instead of Client (tests
	// interpose on them).
	StatusClient client.Client
	// Events receives the scheduler's events: of its decisions, of why jobs wait, and of
	// problems with the cluster's objects (marked scheduling.ProblemEventAnnotation). Nil
	// posts none.
	Events record.EventRecorder
	// Metrics receives what the cycles, the effects and the status updater measure.
	// Required: metrics.Discard{} measures nothing.
	Metrics metrics.Recorder
	// DispatchWorkers send binds, evictions and nominations off the cycle, in parallel
	// (apiwriter.Dispatcher), each waiting at most DecisionGrace at shutdown; 0 sends them within
	// the cycle, in order (kai-sim, whose virtual time must not race a worker).
	DispatchWorkers int
	DecisionGrace   time.Duration
	// StatusWorkers write start stamps and statuses in parallel; the stamps owed are written
	// for StampGrace at shutdown. 0 keeps the updater's defaults.
	StatusWorkers int
	StampGrace    time.Duration
	// Reservations, when set, readies nodes for the GPU shares bound there (reservation pods
	// and the shares' ConfigMaps: GPU sharing on the node); nil only labels shares.
	Reservations *gpureservation.Reserver
}

// Scheduler is one assembled scheduler: the Store its cluster side feeds, the Loop that runs
// its cycles, and the status updater and dispatcher that write what they decide. The caller
// runs them: the binary adds Loop, Status and Dispatcher to its manager; kai-sim steps Loop
// and flushes Status in virtual time.
type Scheduler struct {
	Store  *store.Store
	Status *status.Updater
	// Dispatcher is nil when decisions are sent within the cycle (Options.DispatchWorkers 0).
	Dispatcher *apiwriter.Dispatcher
	Loop       *Loop
}

// View is the read half of a scheduler: the snapshot builder over the store it converts the
// cluster's objects in, with the overlay of its own writes. A tool that only
// looks (kubectl kai explain) uses it alone, so that it sees the cluster as the scheduler
// does; New builds every scheduler on one.
type View struct {
	Store   *store.Store
	Overlay *store.Overlay
	Builder *store.Builder
}

// ViewOptions are what a View is built from: the parts of Options that reading needs.
type ViewOptions struct {
	Name  string
	Pool  scheduling.NodePool
	Clock clock.PassiveClock
	// Lister, when set, is listed at every snapshot (a tool reading the cluster once); a
	// scheduler's store is fed by its cluster side instead.
	Lister client.Reader
}

// NewView assembles the read half of a scheduler; a missing clock is an error.
func NewView(opts ViewOptions) (*View, error) {
	if err := assemblyNeeds(opts.missing()); err != nil {
		return nil, err
	}
	return newView(opts), nil
}

// newView assembles a view from options already checked.
func newView(opts ViewOptions) *View {
	converted := store.New(opts.Name, opts.Pool)
	overlay := store.NewOverlay(opts.Clock)
	return &View{Store: converted, Overlay: overlay, Builder: &store.Builder{Store: converted, Overlay: overlay, Reader: opts.Lister}}
}

// missing names the parts a view needs that opts lacks.
func (opts ViewOptions) missing() []error {
	if opts.Clock == nil {
		return []error{errors.New("a clock")}
	}
	return nil
}

// assemblyNeeds is the error naming every missing part at once, or nil.
func assemblyNeeds(missing []error) error {
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("assembling the scheduler needs %w", errors.Join(missing...))
}

// New assembles a scheduler from opts; a missing required part is an error naming it.
func New(opts Options) (*Scheduler, error) {
	viewOpts := ViewOptions{Name: opts.Name, Pool: opts.Pool, Clock: opts.Clock}
	var missing []error
	if opts.Policy == nil {
		missing = append(missing, errors.New("a policy (the actions and plugins to run)"))
	}
	missing = append(missing, viewOpts.missing()...)
	if opts.Period <= 0 {
		missing = append(missing, fmt.Errorf("a period between cycles above zero (got %s)", opts.Period))
	}
	if opts.Client == nil {
		missing = append(missing, errors.New("a client to write decisions and statuses with"))
	}
	if opts.Metrics == nil {
		missing = append(missing, errors.New("a metrics recorder (metrics.Discard{} for none)"))
	}
	if err := assemblyNeeds(missing); err != nil {
		return nil, err
	}
	view := newView(viewOpts)
	statusClient := opts.StatusClient
	if statusClient == nil {
		statusClient = opts.Client
	}
	overlay := view.Overlay
	updater := status.NewUpdater(statusClient, opts.Events, opts.Clock)
	updater.Metrics, updater.NodePool = opts.Metrics, opts.Pool.String()
	if opts.StatusWorkers > 0 {
		updater.Workers = opts.StatusWorkers
	}
	if opts.StampGrace > 0 {
		updater.StampGrace = opts.StampGrace
	}
	direct := &apiwriter.Effects{Client: opts.Client, Recorder: opts.Events, Overlay: overlay, Status: updater, Metrics: opts.Metrics,
		Clock: opts.Clock, Reservations: opts.Reservations}
	s := &Scheduler{Store: view.Store, Status: updater}
	var effects framework.Effects = direct
	if opts.DispatchWorkers > 0 {
		s.Dispatcher = apiwriter.NewDispatcher(direct, opts.DispatchWorkers)
		s.Dispatcher.DrainTimeout = opts.DecisionGrace
		effects = s.Dispatcher
	}
	s.Loop = &Loop{
		Builder: view.Builder,
		Changes: s.Store.Changes(),
		Policy:  opts.Policy,
		Effects: effects,
		Status:  updater,
		Events:  opts.Events,
		Clock:   opts.Clock,
		Period:  opts.Period,
		Metrics: opts.Metrics,
	}
	return s, nil
}
