"""The notebook toolkit: widgets, graphs, plots, audits and exports over the client."""
