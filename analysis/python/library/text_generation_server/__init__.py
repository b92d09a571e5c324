# shardlens' model of text_generation_server (TGI's server package; not the package itself): its tensor-parallel layers.
