package proportion

import "github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"

// fromResources converts an exact resource vector for share arithmetic.
func fromResources(r model.Resources) Vector {
	var v Vector
	for _, name := range model.QuotaResources {
		v[name] = float64(r.Get(name))
	}
	return v
}

func (v Vector) add(o Vector) Vector {
	for i := range v {
		v[i] += o[i]
	}
	return v
}

func (v Vector) sub(o Vector) Vector {
	for i := range v {
		v[i] -= o[i]
	}
	return v
}

func (v Vector) scale(f float64) Vector {
	for i := range v {
		v[i] *= f
	}
	return v
}
