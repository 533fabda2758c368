package proxy

// peerEnv makes the test binary act as a helper process instead of
// running tests (see TestMain); its value names the role.
const peerEnv = "ACPSCOPE_PROXY_TEST_PEER"

func runPeer(mode string) int { return 2 }
