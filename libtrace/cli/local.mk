# libtrace/cli: rules come with the issue that builds this part.
