package io.strata.worker.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link BlockAnnotator#create}: built-in names and annotators loaded by class name. */
class BlockAnnotatorTest {
  /** Orders by descending id, ignoring accesses; loadable by name. */
  public static final class ReverseIdAnnotator implements BlockAnnotator {
    public ReverseIdAnnotator() {}

    @Override
    public void onAccess(long blockId) {}

    @Override
    public void onRemove(long blockId) {}

    @Override
    public List<Long> coldestFirst(Collection<Long> candidates) {
      List<Long> ids = new ArrayList<>(candidates);
      ids.sort((a, b) -> Long.compare(b, a));
      return ids;
    }
  }

  private static final class HiddenAnnotator implements BlockAnnotator {
    @Override
    public void onAccess(long blockId) {}

    @Override
    public void onRemove(long blockId) {}

    @Override
    public List<Long> coldestFirst(Collection<Long> candidates) {
      return List.copyOf(candidates);
    }
  }

  @Test
  void create_mapsNames_toTheBuiltInAnnotators_inAnyCase() {
    assertThat(BlockAnnotator.create("LRU")).isInstanceOf(LruAnnotator.class);
    assertThat(BlockAnnotator.create("LRFU")).isInstanceOf(LrfuAnnotator.class);
    assertThat(BlockAnnotator.create("lrfu")).isInstanceOf(LrfuAnnotator.class);
  }

  @Test
  void create_givesLrfuItsDefaultParameters() {
    assertThat(BlockAnnotator.create("LRFU"))
        .hasToString("LRFU(stepFactor=0.25, attenuation=2.0)");
  }

  @Test
  void create_returnsANewInstanceEachTime() {
    BlockAnnotator a = BlockAnnotator.create("LRU");
    BlockAnnotator b = BlockAnnotator.create("LRU");
    a.onAccess(1);
    a.onAccess(2);
    b.onAccess(2);
    b.onAccess(1);
    assertThat(a.coldestFirst(List.of(1L, 2L))).containsExactly(1L, 2L);
    assertThat(b.coldestFirst(List.of(1L, 2L))).containsExactly(2L, 1L);
  }

  @Test
  void create_loadsACustomClassByName() {
    BlockAnnotator annotator = BlockAnnotator.create(ReverseIdAnnotator.class.getName());
    assertThat(annotator.coldestFirst(List.of(1L, 3L, 2L))).containsExactly(3L, 2L, 1L);
  }

  @Test
  void create_refusesAnUnknownName_namingIt_andListingTheBuiltIns() {
    assertThatThrownBy(() -> BlockAnnotator.create("LFU"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'LFU'")
        .hasMessageContaining("no such class")
        .hasMessageContaining("LRU, LRFU");
  }

  @Test
  void create_refusesAClassThatIsNotABlockAnnotator() {
    String name = GreedyAllocator.class.getName();
    assertThatThrownBy(() -> BlockAnnotator.create(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + name + "'")
        .hasMessageContaining("does not implement " + BlockAnnotator.class.getName());
  }

  @Test
  void create_refusesAClassWithoutAPublicNoArgConstructor() {
    String name = HiddenAnnotator.class.getName();
    assertThatThrownBy(() -> BlockAnnotator.create(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + name + "'")
        .hasMessageContaining("no public no-arg constructor");
  }

  @Test
  void create_refusesABlankName() {
    assertThatThrownBy(() -> BlockAnnotator.create(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("''");
  }
}
