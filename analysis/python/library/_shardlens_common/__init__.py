# shardlens' own helpers for its library models (no real package of this name): what the models of several
# libraries share (null loggers, output fields by position, a world of one process), written once.
