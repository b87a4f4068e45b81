# libtrace/analyze: rules come with the issue that builds this part.
