package io.strata.master.journal;

import io.strata.proto.journal.CommitBlockEntry;
import io.strata.proto.journal.CompleteFileEntry;
import io.strata.proto.journal.CreateFileEntry;
import io.strata.proto.journal.DeleteEntry;
import io.strata.proto.journal.JournalEntryProto;
import io.strata.proto.journal.MkdirEntry;
import io.strata.proto.journal.RenameEntry;

/** The journal's one meeting point of protos and domain entries. Stateless. */
final class JournalCodec {
  private JournalCodec() {}

  static JournalEntryProto toProto(long sequence, JournalEntry e) {
    JournalEntryProto.Builder b = JournalEntryProto.newBuilder().setSequence(sequence);
    if (e instanceof JournalEntry.Mkdir m) {
      b.setMkdir(MkdirEntry.newBuilder().setId(m.id()).setPath(m.path()).setMode(m.mode()).setTimeMs(m.timeMs()));
    } else if (e instanceof JournalEntry.CreateFile c) {
      b.setCreateFile(CreateFileEntry.newBuilder().setId(c.id()).setPath(c.path()).setBlockSize(c.blockSize())
          .setMode(c.mode()).setTimeMs(c.timeMs()));
    } else if (e instanceof JournalEntry.CompleteFile c) {
      b.setCompleteFile(CompleteFileEntry.newBuilder().setId(c.id()).setLength(c.length()).setTimeMs(c.timeMs()));
    } else if (e instanceof JournalEntry.Delete d) {
      b.setDelete(DeleteEntry.newBuilder().setPath(d.path()).setTimeMs(d.timeMs()));
    } else if (e instanceof JournalEntry.Rename r) {
      b.setRename(RenameEntry.newBuilder().setSrc(r.src()).setDst(r.dst()).setTimeMs(r.timeMs()));
    } else if (e instanceof JournalEntry.CommitBlock c) {
      b.setCommitBlock(CommitBlockEntry.newBuilder().setBlockId(c.blockId()).setLength(c.length()));
    } else {
      throw new IllegalArgumentException("Unknown journal entry " + e);
    }
    return b.build();
  }

  static JournalEntry fromProto(JournalEntryProto p) {
    switch (p.getEntryCase()) {
      case MKDIR: {
        MkdirEntry m = p.getMkdir();
        return new JournalEntry.Mkdir(m.getId(), m.getPath(), m.getMode(), m.getTimeMs());
      }
      case CREATE_FILE: {
        CreateFileEntry c = p.getCreateFile();
        return new JournalEntry.CreateFile(c.getId(), c.getPath(), c.getBlockSize(), c.getMode(), c.getTimeMs());
      }
      case COMPLETE_FILE: {
        CompleteFileEntry c = p.getCompleteFile();
        return new JournalEntry.CompleteFile(c.getId(), c.getLength(), c.getTimeMs());
      }
      case DELETE:
        return new JournalEntry.Delete(p.getDelete().getPath(), p.getDelete().getTimeMs());
      case RENAME:
        return new JournalEntry.Rename(p.getRename().getSrc(), p.getRename().getDst(), p.getRename().getTimeMs());
      case COMMIT_BLOCK:
        return new JournalEntry.CommitBlock(p.getCommitBlock().getBlockId(), p.getCommitBlock().getLength());
      default:
        throw new IllegalArgumentException("Journal entry " + p.getSequence() + " has no known kind: "
            + p.getEntryCase());
    }
  }
}
