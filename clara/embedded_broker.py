"""The embedded broker: kombu's filesystem transport, with each message appearing whole.

kombu's transport writes a message in place: it creates `<time>_<uuid>.<queue>.msg` in the queue
folder, then writes it. A worker listing the folder between the two finds an empty file, reads
it, fails to parse it and stops ("Unrecoverable error: JSONDecodeError"), and with it every job,
alerts' deliveries included, until something restarts it (seen under bench/load_test.py's load).
Here a message is written under a name the worker skips (a leading dot: no queue's suffix) and
renamed into place when complete; a rename within a folder is atomic, so a worker sees a message
whole or not at all. Everything else is kombu's.
"""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        """Put `payload` onto `queue`: written aside, then renamed into the queue folder."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        try:
            with open(partial, "wb", buffering=0) as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
