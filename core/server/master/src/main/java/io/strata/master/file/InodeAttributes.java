package io.strata.master.file;

import io.strata.master.journal.JournalEntry;
import java.util.ArrayList;
import java.util.List;

/**
 * How an attribute change ({@link JournalEntry.SetAttribute}: pin, TTL, persistence, owner, group, mode,
 * times) lands on inodes, the same live and on replay, keeping the {@link InodeIndex} in step; and the
 * rule that a persisted inode's directories are persisted too.
 *
 * <p>Stateless; its callers hold the tree's write lock.
 */
final class InodeAttributes {
  private InodeAttributes() {}

  /** Applies {@code a} to {@code inode} alone (null fields unchanged). */
  static void apply(InodeIndex index, Inode inode, JournalEntry.SetAttribute a) {
    if (a.pinned() != null) {
      index.setPinned(inode, a.pinned());
    }
    if (a.ttlMs() != null) {
      index.setTtl(inode, a.ttlMs());
    }
    if (a.ttlAction() != null) {
      inode.ttlAction = TtlAction.valueOf(a.ttlAction());
    }
    if (a.persistenceState() != null) {
      index.setPersistence(inode, PersistenceState.valueOf(a.persistenceState()));
    }
    if (a.ufsMtimeMs() != null && inode instanceof InodeFile f) {
      f.ufsMtimeMs = a.ufsMtimeMs();
    }
    if (a.owner() != null) {
      inode.owner = a.owner();
    }
    if (a.group() != null) {
      inode.group = a.group();
    }
    if (a.mode() != null) {
      inode.mode = a.mode();
    }
    if (a.modificationTimeMs() != null) {
      inode.modificationTimeMs = a.modificationTimeMs();
    }
    if (a.accessTimeMs() != null) {
      inode.accessTimeMs = a.accessTimeMs();
    }
  }

  /** {@link #apply} on {@code top} and, for a recursive change, on everything under it. */
  static void applyTree(InodeIndex index, Inode top, JournalEntry.SetAttribute a) {
    if (!a.recursive()) {
      apply(index, top, a);
      return;
    }
    List<Inode> stack = new ArrayList<>();
    stack.add(top);
    while (!stack.isEmpty()) {
      Inode cur = stack.remove(stack.size() - 1);
      apply(index, cur, a);
      if (cur instanceof InodeDirectory d) {
        stack.addAll(d.children.values());
      }
    }
  }

  /** A persisted file's directories exist in the UFS too (the UFS made them): say so, journaled. */
  static void markAncestorsPersisted(Inode inode, List<JournalEntry> entries) {
    for (InodeDirectory d = inode.parent; d != null && d.parent != null; d = d.parent) {
      if (d.persistence == PersistenceState.PERSISTED) {
        return;
      }
      d.persistence = PersistenceState.PERSISTED;
      entries.add(new JournalEntry.SetAttribute(d.id, null, null, null, PersistenceState.PERSISTED.name(), null));
    }
  }
}
