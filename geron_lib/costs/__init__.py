"""What a model costs, counted in closed form without building it: parameters, FLOPs, a block's activation
memory (the estimate the model's entries check before they allocate) and a training step's bytes. Imports
only the config and validate: the model imports it, never the other way (a contract in ``make lint``)."""
