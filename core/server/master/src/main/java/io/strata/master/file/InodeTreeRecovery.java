package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.master.journal.JournalEntry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The namespace's side of recovery: applying a journaled change to the tree during replay, and the
 * entries that rebuild the whole tree, for a checkpoint. Replay takes ids and times from the entries and
 * journals nothing; a checkpoint's entries replay into the same tree (parents before children, then the
 * directory times that re-creating children would have moved).
 *
 * <p>Stateless; the {@link InodeTree} calls it with its lock held (write for replay, read for a checkpoint).
 */
final class InodeTreeRecovery {
  private InodeTreeRecovery() {}

  /**
   * Applies a journaled change during replay (no journaling, times and ids from the entry). Returns the
   * ids of files a Delete removed, empty otherwise.
   */
  static List<Long> apply(InodeDirectory root, InodeIndex index, JournalEntry entry) throws StrataException {
    if (entry instanceof JournalEntry.Mkdir m) {
      StrataPath p = StrataPath.of(m.path());
      InodeDirectory parent = (InodeDirectory) root.require(p.parent());
      InodeDirectory d = new InodeDirectory(m.id(), p.name(), parent, m.timeMs(), Inode.ownerOrDefault(m.owner()),
          Inode.groupOrDefault(m.group()), m.mode());
      d.persistence = PersistenceState.parse(m.persistenceState());
      index.addDirectory(d);
      parent.children.put(d.name, d);
      parent.modificationTimeMs = m.timeMs();
      index.idsTakenBelow(m.id() + 1);
    } else if (entry instanceof JournalEntry.CreateFile c) {
      StrataPath p = StrataPath.of(c.path());
      InodeDirectory parent = (InodeDirectory) root.require(p.parent());
      InodeFile f = new InodeFile(c.id(), p.name(), parent, c.timeMs(), Inode.ownerOrDefault(c.owner()),
          Inode.groupOrDefault(c.group()), c.mode(), c.blockSize());
      f.writeType = WriteType.parse(c.writeType());
      parent.children.put(f.name, f);
      parent.modificationTimeMs = c.timeMs();
      index.addFile(f);
      index.idsTakenBelow(c.id() + 1);
    } else if (entry instanceof JournalEntry.CompleteFile c) {
      InodeFile f = index.file(c.id());
      if (f == null) {
        throw new NotFoundException("Journal completes file id " + c.id() + ", which does not exist");
      }
      f.length = c.length();
      f.complete = true;
      f.modificationTimeMs = c.timeMs();
      f.ufsMtimeMs = c.ufsMtimeMs();
      index.contentTag(f, c.ufsContentTag());
      index.setPersistence(f, PersistenceState.parse(c.persistenceState()));
    } else if (entry instanceof JournalEntry.Delete d) {
      Inode inode = root.require(StrataPath.of(d.path()));
      if (inode.parent == null) {
        throw new InvalidArgumentException("Journal deletes the root directory");
      }
      List<Long> removed = new ArrayList<>();
      index.removeSubtree(inode, removed);
      inode.parent.children.remove(inode.name);
      inode.parent.modificationTimeMs = d.timeMs();
      return removed;
    } else if (entry instanceof JournalEntry.Rename r) {
      StrataPath dst = StrataPath.of(r.dst());
      Inode inode = root.require(StrataPath.of(r.src()));
      InodeDirectory dstParent = (InodeDirectory) root.require(dst.parent());
      inode.parent.children.remove(inode.name);
      inode.parent.modificationTimeMs = r.timeMs();
      inode.name = dst.name();
      inode.parent = dstParent;
      dstParent.children.put(inode.name, inode);
      dstParent.modificationTimeMs = r.timeMs();
      index.pinsMayHaveChanged();
      index.renamed(inode);
    } else if (entry instanceof JournalEntry.NextInodeId n) {
      index.idsTakenBelow(n.nextId());
    } else if (entry instanceof JournalEntry.DirectoryModified m) {
      root.require(StrataPath.of(m.path())).modificationTimeMs = m.timeMs();
    } else if (entry instanceof JournalEntry.SetAttribute a) {
      Inode inode = index.byId(a.id());
      if (inode == null) {
        throw new NotFoundException("Journal sets attributes of inode " + a.id() + ", which does not exist");
      }
      InodeAttributes.applyTree(index, inode, a);
  }
  return List.of();
  }

  /**
   * The entries that rebuild this tree (the id counter, parents before children, then directory times),
   * for a checkpoint. The tree's read lock is held, and whatever keeps the journal sequence still.
   */
  static List<JournalEntry> snapshotEntries(InodeDirectory root, InodeIndex index) {
    List<JournalEntry> out = new ArrayList<>();
    out.add(new JournalEntry.NextInodeId(index.nextId()));
    if (!root.owner.equals(Inode.DEFAULT_OWNER) || !root.group.equals(Inode.DEFAULT_GROUP) || root.mode != 0755
        || root.accessTimeMs != root.creationTimeMs || root.pinned || root.ttlMs >= 0) {
      // The root is in no Mkdir entry: its own attributes.
      out.add(new JournalEntry.SetAttribute(root.id, root.pinned ? Boolean.TRUE : null,
          root.ttlMs >= 0 ? root.ttlMs : null, root.ttlMs >= 0 ? root.ttlAction.name() : null, null, null,
          root.owner, root.group, root.mode, null, root.accessTimeMs, false));
    }
    // Last, once nothing re-created under them can move them again.
    List<JournalEntry> dirTimes = new ArrayList<>();
    dirTimes.add(new JournalEntry.DirectoryModified("/", root.modificationTimeMs));
    List<Inode> stack = new ArrayList<>(root.children.values());
    Collections.reverse(stack);
    while (!stack.isEmpty()) {
      Inode inode = stack.remove(stack.size() - 1);
      String path = InodeViews.pathOf(inode);
      if (inode instanceof InodeDirectory d) {
        out.add(new JournalEntry.Mkdir(d.id, path, d.mode, d.creationTimeMs, d.persistence.name(), d.owner,
            d.group));
        dirTimes.add(new JournalEntry.DirectoryModified(path, d.modificationTimeMs));
        List<Inode> kids = new ArrayList<>(d.children.values());
        Collections.reverse(kids);
        stack.addAll(kids);
      } else {
        InodeFile f = (InodeFile) inode;
        out.add(new JournalEntry.CreateFile(f.id, path, f.blockSize, f.mode, f.creationTimeMs,
            f.writeType.name(), f.owner, f.group));
        if (f.complete) {
          out.add(new JournalEntry.CompleteFile(f.id, f.length, f.modificationTimeMs, f.persistence.name(),
              f.ufsMtimeMs, f.ufsContentTag));
        }
      }
      // Times no other entry carries: the access time once set, an incomplete file's modification time.
      Long atime = inode.accessTimeMs != inode.creationTimeMs ? inode.accessTimeMs : null;
      Long mtime = inode instanceof InodeFile f && !f.complete && f.modificationTimeMs != f.creationTimeMs
          ? f.modificationTimeMs : null;
      if (inode.pinned || inode.ttlMs >= 0 || atime != null || mtime != null) {
        out.add(new JournalEntry.SetAttribute(inode.id, inode.pinned ? Boolean.TRUE : null,
            inode.ttlMs >= 0 ? inode.ttlMs : null, inode.ttlMs >= 0 ? inode.ttlAction.name() : null, null, null,
            null, null, null, mtime, atime, false));
      }
    }
    out.addAll(dirTimes);
    return out;
  }
}
