package io.strata.master.journal;

import io.strata.proto.journal.CommitBlockEntry;
import io.strata.proto.journal.CompleteFileEntry;
import io.strata.proto.journal.CreateFileEntry;
import io.strata.proto.journal.DeleteEntry;
import io.strata.proto.journal.DirectoryModifiedEntry;
import io.strata.proto.journal.JournalEntryProto;
import io.strata.proto.journal.MkdirEntry;
import io.strata.proto.journal.NextInodeIdEntry;
import io.strata.proto.journal.RenameEntry;

/** The journal's one meeting point of protos and domain entries. Stateless. */
final class JournalCodec {
  private JournalCodec() {}

  static JournalEntryProto toProto(long sequence, JournalEntry e) {
    return toProto(sequence, e, false);
  }

  /** {@code continues}: the next entry belongs to the same operation. */
  static JournalEntryProto toProto(long sequence, JournalEntry e, boolean continues) {
    JournalEntryProto.Builder b = JournalEntryProto.newBuilder().setSequence(sequence).setContinues(continues);
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
    } else if (e instanceof JournalEntry.NextInodeId n) {
      b.setNextInodeId(NextInodeIdEntry.newBuilder().setNextId(n.nextId()));
    } else if (e instanceof JournalEntry.DirectoryModified m) {
      b.setDirectoryModified(DirectoryModifiedEntry.newBuilder().setPath(m.path()).setTimeMs(m.timeMs()));
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
      case NEXT_INODE_ID:
        return new JournalEntry.NextInodeId(p.getNextInodeId().getNextId());
      case DIRECTORY_MODIFIED:
        return new JournalEntry.DirectoryModified(p.getDirectoryModified().getPath(),
            p.getDirectoryModified().getTimeMs());
      default:
        throw new IllegalArgumentException("Journal entry " + p.getSequence() + " has no known kind: "
            + p.getEntryCase());
    }
  }
}
