"""The perplexity axis reads a loss axis in nats as exp(loss)."""

import io

import numpy as np

from geron_lib.notebook.plots import new_figure, perplexity_axis


def test_perplexity_axis_maps_nats_to_their_exponential():
    fig, ax = new_figure()
    ax.plot([1, 2, 3], [2.0, 3.0, 4.0])
    twin = perplexity_axis(ax)
    fig.savefig(io.BytesIO(), format="png")  # lays the axes out
    low, high = ax.get_ylim()
    assert np.allclose(twin.get_ylim(), (np.exp(low), np.exp(high)))
    assert "exp" in twin.get_ylabel()
    ticks = [t for t in twin.get_yticks() if np.exp(low) <= t <= np.exp(high)]
    assert ticks and all(low <= np.log(t) <= high for t in ticks)
