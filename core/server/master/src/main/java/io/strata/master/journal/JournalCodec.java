package io.strata.master.journal;

import io.strata.proto.journal.AddMountEntry;
import io.strata.proto.journal.CommitBlockEntry;
import io.strata.proto.journal.CompleteFileEntry;
import io.strata.proto.journal.CreateFileEntry;
import io.strata.proto.journal.DeleteEntry;
import io.strata.proto.journal.DeleteMountEntry;
import io.strata.proto.journal.DirectoryModifiedEntry;
import io.strata.proto.journal.JournalEntryProto;
import io.strata.proto.journal.MkdirEntry;
import io.strata.proto.journal.NextInodeIdEntry;
import io.strata.proto.journal.RenameEntry;
import io.strata.proto.journal.SetAttributeEntry;

/** The journal's one meeting point of protos and domain entries. Stateless. */
final class JournalCodec {
  private JournalCodec() {}

  static JournalEntryProto toProto(long sequence, JournalEntry e) {
    return toProto(sequence, e, false);
  }

  /** {@code continues}: the next entry belongs to the same operation. */
  static JournalEntryProto toProto(long sequence, JournalEntry e, boolean continues) {
    return toProto(sequence, e, continues, 0);
  }

  /** As above, written by the leader of {@code epoch} (0: none, as in a checkpoint). */
  static JournalEntryProto toProto(long sequence, JournalEntry e, boolean continues, long epoch) {
    JournalEntryProto.Builder b = JournalEntryProto.newBuilder().setSequence(sequence).setContinues(continues);
    if (epoch != 0) {
      b.setEpoch(epoch);
    }
    if (e instanceof JournalEntry.Mkdir m) {
      b.setMkdir(MkdirEntry.newBuilder().setId(m.id()).setPath(m.path()).setMode(m.mode()).setTimeMs(m.timeMs())
          .setPersistenceState(m.persistenceState()).setOwner(m.owner()).setGroup(m.group()));
    } else if (e instanceof JournalEntry.CreateFile c) {
      b.setCreateFile(CreateFileEntry.newBuilder().setId(c.id()).setPath(c.path()).setBlockSize(c.blockSize())
          .setMode(c.mode()).setTimeMs(c.timeMs()).setWriteType(c.writeType()).setOwner(c.owner())
          .setGroup(c.group()));
    } else if (e instanceof JournalEntry.CompleteFile c) {
      b.setCompleteFile(CompleteFileEntry.newBuilder().setId(c.id()).setLength(c.length()).setTimeMs(c.timeMs())
          .setPersistenceState(c.persistenceState()).setUfsMtimeMs(c.ufsMtimeMs()).setUfsContentTag(c.ufsContentTag()));
    } else if (e instanceof JournalEntry.Delete d) {
      b.setDelete(DeleteEntry.newBuilder().setPath(d.path()).setTimeMs(d.timeMs()));
    } else if (e instanceof JournalEntry.Rename r) {
      b.setRename(RenameEntry.newBuilder().setSrc(r.src()).setDst(r.dst()).setTimeMs(r.timeMs()));
    } else if (e instanceof JournalEntry.CommitBlock c) {
      b.setCommitBlock(CommitBlockEntry.newBuilder().setBlockId(c.blockId()).setLength(c.length()));
    } else if (e instanceof JournalEntry.Free f) {
      b.setFree(io.strata.proto.journal.FreeEntry.newBuilder().addAllFileIds(f.fileIds()));
    } else if (e instanceof JournalEntry.NextInodeId n) {
      b.setNextInodeId(NextInodeIdEntry.newBuilder().setNextId(n.nextId()));
    } else if (e instanceof JournalEntry.DirectoryModified m) {
      b.setDirectoryModified(DirectoryModifiedEntry.newBuilder().setPath(m.path()).setTimeMs(m.timeMs()));
    } else if (e instanceof JournalEntry.SetAttribute a) {
      SetAttributeEntry.Builder sa = SetAttributeEntry.newBuilder().setId(a.id());
      if (a.pinned() != null) {
        sa.setPinned(a.pinned());
      }
      if (a.ttlMs() != null) {
        sa.setTtlMs(a.ttlMs());
      }
      if (a.ttlAction() != null) {
        sa.setTtlAction(a.ttlAction());
      }
      if (a.persistenceState() != null) {
        sa.setPersistenceState(a.persistenceState());
      }
      if (a.ufsMtimeMs() != null) {
        sa.setUfsMtimeMs(a.ufsMtimeMs());
      }
      if (a.owner() != null) {
        sa.setOwner(a.owner());
      }
      if (a.group() != null) {
        sa.setGroup(a.group());
      }
      if (a.mode() != null) {
        sa.setMode(a.mode());
      }
      if (a.modificationTimeMs() != null) {
        sa.setModificationTimeMs(a.modificationTimeMs());
      }
      if (a.accessTimeMs() != null) {
        sa.setAccessTimeMs(a.accessTimeMs());
      }
      b.setSetAttribute(sa.setRecursive(a.recursive()));
    } else if (e instanceof JournalEntry.AddMount m) {
      b.setAddMount(AddMountEntry.newBuilder().setPath(m.path()).setUfsUri(m.ufsUri()).setReadOnly(m.readOnly())
          .setShared(m.shared()).putAllOptions(m.options()));
    } else if (e instanceof JournalEntry.DeleteMount m) {
      b.setDeleteMount(DeleteMountEntry.newBuilder().setPath(m.path()));
    } else if (e instanceof JournalEntry.UfsWriteTarget t) {
      b.setUfsWriteTarget(io.strata.proto.journal.UfsWriteTargetEntry.newBuilder().setFileId(t.fileId())
          .setTempUri(t.tempUri()));
    } else if (e instanceof JournalEntry.UfsTempDeleted t) {
      b.setUfsTempDeleted(io.strata.proto.journal.UfsTempDeletedEntry.newBuilder().setTempUri(t.tempUri()));
    } else if (e instanceof JournalEntry.RequestDone r) {
      b.setRequestDone(io.strata.proto.journal.RequestDoneEntry.newBuilder().setClientId(r.clientId())
          .setCallId(r.callId()).setInodeId(r.inodeId()).setTimeMs(r.timeMs()));
    } else {
      throw new IllegalArgumentException("Unknown journal entry " + e);
    }
    return b.build();
  }

  static JournalEntry fromProto(JournalEntryProto p) {
    switch (p.getEntryCase()) {
      case MKDIR: {
        MkdirEntry m = p.getMkdir();
        return new JournalEntry.Mkdir(m.getId(), m.getPath(), m.getMode(), m.getTimeMs(),
            m.getPersistenceState().isEmpty() ? "NOT_PERSISTED" : m.getPersistenceState(), m.getOwner(),
            m.getGroup());
      }
      case CREATE_FILE: {
        CreateFileEntry c = p.getCreateFile();
        return new JournalEntry.CreateFile(c.getId(), c.getPath(), c.getBlockSize(), c.getMode(), c.getTimeMs(),
            c.getWriteType().isEmpty() ? "MUST_CACHE" : c.getWriteType(), c.getOwner(), c.getGroup());
      }
      case COMPLETE_FILE: {
        CompleteFileEntry c = p.getCompleteFile();
        return new JournalEntry.CompleteFile(c.getId(), c.getLength(), c.getTimeMs(),
            c.getPersistenceState().isEmpty() ? "NOT_PERSISTED" : c.getPersistenceState(), c.getUfsMtimeMs(),
            c.getUfsContentTag());
      }
      case DELETE:
        return new JournalEntry.Delete(p.getDelete().getPath(), p.getDelete().getTimeMs());
      case RENAME:
        return new JournalEntry.Rename(p.getRename().getSrc(), p.getRename().getDst(), p.getRename().getTimeMs());
      case COMMIT_BLOCK:
        return new JournalEntry.CommitBlock(p.getCommitBlock().getBlockId(), p.getCommitBlock().getLength());
      case FREE:
        return new JournalEntry.Free(p.getFree().getFileIdsList());
      case NEXT_INODE_ID:
        return new JournalEntry.NextInodeId(p.getNextInodeId().getNextId());
      case DIRECTORY_MODIFIED:
        return new JournalEntry.DirectoryModified(p.getDirectoryModified().getPath(),
            p.getDirectoryModified().getTimeMs());
      case SET_ATTRIBUTE: {
        SetAttributeEntry a = p.getSetAttribute();
        return new JournalEntry.SetAttribute(a.getId(), a.hasPinned() ? a.getPinned() : null,
            a.hasTtlMs() ? a.getTtlMs() : null, a.hasTtlAction() ? a.getTtlAction() : null,
            a.hasPersistenceState() ? a.getPersistenceState() : null, a.hasUfsMtimeMs() ? a.getUfsMtimeMs() : null,
            a.hasOwner() ? a.getOwner() : null, a.hasGroup() ? a.getGroup() : null, a.hasMode() ? a.getMode() : null,
            a.hasModificationTimeMs() ? a.getModificationTimeMs() : null,
            a.hasAccessTimeMs() ? a.getAccessTimeMs() : null, a.getRecursive());
      }
      case ADD_MOUNT: {
        AddMountEntry m = p.getAddMount();
        return new JournalEntry.AddMount(m.getPath(), m.getUfsUri(), m.getReadOnly(), m.getShared(),
            m.getOptionsMap());
      }
      case DELETE_MOUNT:
        return new JournalEntry.DeleteMount(p.getDeleteMount().getPath());
      case UFS_WRITE_TARGET:
        return new JournalEntry.UfsWriteTarget(p.getUfsWriteTarget().getFileId(), p.getUfsWriteTarget().getTempUri());
      case UFS_TEMP_DELETED:
        return new JournalEntry.UfsTempDeleted(p.getUfsTempDeleted().getTempUri());
      case REQUEST_DONE: {
        io.strata.proto.journal.RequestDoneEntry r = p.getRequestDone();
        return new JournalEntry.RequestDone(r.getClientId(), r.getCallId(), r.getInodeId(), r.getTimeMs());
      }
      default:
        throw new IllegalArgumentException("Journal entry " + p.getSequence() + " has no known kind: "
            + p.getEntryCase());
    }
  }
}
