package mpi

// Single is the pure-Go communicator of one process: rank 0 of size 1.
// Reductions and broadcasts leave the data as it is (the sum or maximum over
// one rank is its own value) and Allgatherv copies send into recv; the
// arguments are checked as by the native communicator. It is compiled into
// every build and never closes.
var Single Comm = single{}

// single is the single-process communicator; world marks the one Open
// returns in the pure-Go build, which Close closes.
type single struct{ world bool }

func (s single) check(op string) error {
	if s.world && closed.Load() {
		return closedError(op)
	}
	return nil
}

func (single) Rank() int { return 0 }
func (single) Size() int { return 1 }

func (s single) Barrier() error { return s.check(opBarrier) }

func (s single) AllreduceSum(buf []float64) error {
	if err := checkBuf(opAllreduce, buf == nil); err != nil {
		return err
	}
	return s.check(opAllreduce)
}

func (s single) AllreduceMax(buf []float64) error { return s.AllreduceSum(buf) }

func (s single) AllreduceSumScalar(x float64) (float64, error) {
	if err := s.check(opAllreduce); err != nil {
		return 0, err
	}
	return x, nil
}

func (s single) AllreduceMaxScalar(x float64) (float64, error) { return s.AllreduceSumScalar(x) }

func (s single) Bcast(buf []float64, root int) error {
	if err := checkBuf(opBcast, buf == nil); err != nil {
		return err
	}
	if err := checkRoot(opBcast, root, 1); err != nil {
		return err
	}
	return s.check(opBcast)
}

func (s single) BcastBytes(buf []byte, root int) error {
	if err := checkBuf(opBcast, buf == nil); err != nil {
		return err
	}
	if err := checkRoot(opBcast, root, 1); err != nil {
		return err
	}
	return s.check(opBcast)
}

func (s single) Allgatherv(send, recv []float64, counts []int) error {
	if _, err := checkGather(send, recv, counts, 0, 1); err != nil {
		return err
	}
	if err := s.check(opAllgatherv); err != nil {
		return err
	}
	copy(recv, send)
	return nil
}
