package capture

type feedServer struct{}

func startFeed(w *Writer) (*feedServer, error) { return nil, nil }
func (f *feedServer) advance(last uint64)      {}
func (f *feedServer) close()                   {}
func removeStaleSocket(path string)            {}
