package bus

// RemakeFromAckFloor is RewindProjectConsumer's way on a server without
// consumer reset, for tests on a server that has it.
var RemakeFromAckFloor = (*Layout).remakeFromAckFloor
