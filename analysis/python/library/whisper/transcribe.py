# shardlens' stand-in for whisper.transcribe (openai-whisper; not the package itself): transcription is not modelled.


def transcribe(model, audio, **kwargs):
    raise NotImplementedError("shardlens does not run Whisper transcription")
