package io.strata.worker.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Least Recently/Frequently Used (Lee et al., "LRFU: a spectrum of policies that subsumes the LRU and
 * LFU policies", IEEE Trans. Computers 2001), in the form Alluxio uses: each block keeps a Combined
 * Recency and Frequency value, updated at an access at logical time {@code t} as
 * {@code crf = crf * F(t - lastT) + 1}, with {@code F(x) = (1 / attenuation) ^ (stepFactor * x)}. Blocks
 * are ordered by their CRF decayed to the current time, {@code crf * F(now - lastT)}, smallest (coldest)
 * first.
 *
 * <p>{@code stepFactor} moves the policy along the spectrum: 0 never decays, so CRF is the access count
 * (LFU); 1 with attenuation 2 decays so fast that one later access outweighs any number of earlier ones
 * (LRU). The defaults, 0.25 and 2, halve a block's weight every 4 steps of logical time (4 accesses
 * to any blocks).
 *
 * <p>Numerics: the decayed CRF underflows to 0 after a few thousand accesses elsewhere, which would erase
 * the order among old blocks. So the order is computed on its logarithm less the term common to all
 * blocks, {@code ln(crf) + stepFactor * ln(attenuation) * lastT}, which ranks blocks exactly as the
 * decayed CRF does but stays finite. Stored CRFs stay bounded: below {@code 1 / (1 - F(1))} when
 * stepFactor is positive, the access count when it is 0.
 *
 * <p>State: per block its CRF and last access time, from the first access to {@link #onRemove}.
 * Thread-safe: every method is synchronized on this object.
 */
public final class LrfuAnnotator implements BlockAnnotator {
  public static final double DEFAULT_STEP_FACTOR = 0.25;
  public static final double DEFAULT_ATTENUATION = 2.0;

  private static final class Crf {
    double value;
    long lastAccess;
  }

  private final double stepFactor;
  private final double attenuation;
  /** {@code ln F(1)} negated: the log-weight one step of logical time takes off. */
  private final double logDecayPerStep;
  private final Map<Long, Crf> crfs = new HashMap<>();
  private long now;

  public LrfuAnnotator() {
    this(DEFAULT_STEP_FACTOR, DEFAULT_ATTENUATION);
  }

  /**
   * @param stepFactor in [0, 1]; 0 is LFU, 1 (with attenuation 2) LRU
   * @param attenuation at least 2, finite
   */
  public LrfuAnnotator(double stepFactor, double attenuation) {
    if (!(stepFactor >= 0 && stepFactor <= 1)) {
      throw new IllegalArgumentException("LRFU stepFactor must be in [0, 1], got " + stepFactor);
    }
    if (!(attenuation >= 2) || Double.isInfinite(attenuation)) {
      throw new IllegalArgumentException("LRFU attenuation must be finite and >= 2, got " + attenuation);
    }
    this.stepFactor = stepFactor;
    this.attenuation = attenuation;
    this.logDecayPerStep = stepFactor * Math.log(attenuation);
  }

  /** F(x): the weight left of an access {@code x} logical steps ago. */
  private double decay(long steps) {
    return Math.pow(1.0 / attenuation, stepFactor * steps);
  }

  @Override
  public synchronized void onAccess(long blockId) {
    long t = ++now;
    Crf crf = crfs.get(blockId);
    if (crf == null) {
      crf = new Crf();
      crfs.put(blockId, crf);
    } else {
      crf.value *= decay(t - crf.lastAccess);
    }
    crf.value += 1.0;
    crf.lastAccess = t;
  }

  @Override
  public synchronized void onRemove(long blockId) {
    crfs.remove(blockId);
  }

  @Override
  public synchronized List<Long> coldestFirst(Collection<Long> candidates) {
    List<Long> ids = new ArrayList<>(new LinkedHashSet<>(candidates));
    Map<Long, Double> heat = new HashMap<>(ids.size() * 2);
    for (Long id : ids) {
      Crf crf = crfs.get(id);
      heat.put(id, crf == null
          ? Double.NEGATIVE_INFINITY // never seen: colder than any accessed block
          : Math.log(crf.value) + logDecayPerStep * crf.lastAccess);
    }
    // Ties (equal counts under LFU, never-seen blocks): older access first, then lower id.
    ids.sort(Comparator.<Long>comparingDouble(heat::get)
        .thenComparingLong(id -> lastAccessOf(id))
        .thenComparingLong(id -> id));
    return ids;
  }

  private long lastAccessOf(long blockId) {
    Crf crf = crfs.get(blockId);
    return crf == null ? 0 : crf.lastAccess;
  }

  /** The block's CRF decayed to the current logical time, 0 for a block not tracked; for tests. */
  synchronized double currentCrf(long blockId) {
    Crf crf = crfs.get(blockId);
    return crf == null ? 0 : crf.value * decay(now - crf.lastAccess);
  }

  /** Blocks currently remembered; for tests of the memory bound. */
  synchronized int trackedBlocks() {
    return crfs.size();
  }

  @Override
  public String toString() {
    return "LRFU(stepFactor=" + stepFactor + ", attenuation=" + attenuation + ")";
  }
}
